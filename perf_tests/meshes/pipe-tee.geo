// The fluid volume of a pipe T-junction (a CFD domain): a main pipe with a
// smaller branch pipe joining it at right angles.
// gmsh -3 -format msh22 -setnumber h 0.06 pipe-tee.geo
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.06, Name "mesh size"} ];
Cylinder(1) = {-2, 0, 0, 4, 0, 0, 0.5};
Cylinder(2) = {0, 0, 0, 0, 0, 1.8, 0.3};
BooleanUnion{ Volume{1}; Delete; }{ Volume{2}; Delete; }
Mesh.CharacteristicLengthMax = h;
Mesh.CharacteristicLengthMin = h / 2;
